// Rodinia 3.1 dwt2d (M. Jirman's CUDA DWT, BSD-3-style licence below): cuda/dwt2d/dwt_cuda/common.h
// (its host-only CudaDWTTester class and memCopy() dropped), transform_buffer.h, io.h and fdwt53.cu
// up to fdwt53Kernel (host launchers dropped), inlined in #include order, as published in
// yuhc/gpu-rodinia @ 9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4 (a mirror of rodinia_3.1/cuda). The
// test launches dwt_cuda::fdwt53Kernel<64, 8> as launchFDWT53Kernel does.
// Licence: BSD-style, Copyright (c) 2011 Martin Jirman (notice below); Rodinia BSD-style licence,
// Copyright (c) 2008-2011 University of Virginia.
///  
/// @file    common.h
/// @author  Martin Jirman (207962@mail.muni.cz)
/// @brief   Common stuff for all CUDA dwt functions.
/// @date    2011-01-20 14:19
///
/// Copyright (c) 2011 Martin Jirman
/// All rights reserved.
/// 
/// Redistribution and use in source and binary forms, with or without
/// modification, are permitted provided that the following conditions are met:
/// 
///     * Redistributions of source code must retain the above copyright
///       notice, this list of conditions and the following disclaimer.
///     * Redistributions in binary form must reproduce the above copyright
///       notice, this list of conditions and the following disclaimer in the
///       documentation and/or other materials provided with the distribution.
/// 
/// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
/// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
/// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
/// ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
/// LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
/// CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
/// SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
/// INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
/// CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
/// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
/// POSSIBILITY OF SUCH DAMAGE.
///


#ifndef DWT_COMMON_H
#define	DWT_COMMON_H


#include <cstdio>
#include <algorithm>
#include <vector>



// compile time minimum macro
#define CTMIN(a,b) (((a) < (b)) ? (a) : (b))



// performance testing macros
#if defined(GPU_DWT_TESTING)
  #define PERF_BEGIN  \
  { \
    dwt_cuda::CudaDWTTester PERF_TESTER; \
    for(int PERF_N = PERF_TESTER.getNumIterations(); PERF_N--; ) \
    { \
      PERF_TESTER.beginTestIteration();

  #define PERF_END(PERF_NAME, PERF_W, PERF_H)  \
      PERF_TESTER.endTestIteration(); \
    } \
    PERF_TESTER.showPerformance(PERF_NAME, PERF_W, PERF_H); \
  }
#else // GPU_DWT_TESTING
  #define PERF_BEGIN
  #define PERF_END(PERF_NAME, PERF_W, PERF_H)
#endif // GPU_DWT_TESTING



namespace dwt_cuda {
  
  
  /// Divide and round up.
  template <typename T>
  __device__ __host__ inline T divRndUp(const T & n, const T & d) {
    return (n / d) + ((n % d) ? 1 : 0);
  }
  
  
  // 9/7 forward DWT lifting schema coefficients
  const float f97Predict1 = -1.586134342;   ///< forward 9/7 predict 1
  const float f97Update1 = -0.05298011854;  ///< forward 9/7 update 1
  const float f97Predict2 = 0.8829110762;   ///< forward 9/7 predict 2
  const float f97Update2 = 0.4435068522;    ///< forward 9/7 update 2


  // 9/7 reverse DWT lifting schema coefficients
  const float r97update2 = -f97Update2;    ///< undo 9/7 update 2
  const float r97predict2 = -f97Predict2;  ///< undo 9/7 predict 2
  const float r97update1 = -f97Update1;    ///< undo 9/7 update 1
  const float r97Predict1 = -f97Predict1;  ///< undo 9/7 predict 1
  
  // FDWT 9/7 scaling coefficients
  const float scale97Mul = 1.23017410491400f;
  const float scale97Div = 1.0 / scale97Mul;
  
  
  // 5/3 forward DWT lifting schema coefficients
  const float forward53Predict = -0.5f;   /// forward 5/3 predict
  const float forward53Update = 0.25f;    /// forward 5/3 update
  
  // 5/3 forward DWT lifting schema coefficients
  const float reverse53Update = -forward53Update;    /// undo 5/3 update
  const float reverse53Predict = -forward53Predict;  /// undo 5/3 predict
  
  
  
  /// Functor which adds scaled sum of neighbors to given central pixel.
  struct AddScaledSum {
    const float scale;  // scale of neighbors
    __device__ AddScaledSum(const float scale) : scale(scale) {}
    __device__ void operator()(const float p, float & c, const float n) const {
      c += scale * (p + n);
    }
  };
  
  
  
  /// Returns index ranging from 0 to num threads, such that first half
  /// of threads get even indices and others get odd indices. Each thread
  /// gets different index.
  /// Example: (for 8 threads)   threadIdx.x:   0  1  2  3  4  5  6  7
  ///                              parityIdx:   0  2  4  6  1  3  5  7
  /// @tparam THREADS  total count of participating threads
  /// @return parity-separated index of thread
  template <int THREADS>
  __device__ inline int parityIdx() {
    return (threadIdx.x * 2) - (THREADS - 1) * (threadIdx.x / (THREADS / 2));
  }
  
          
  
  /// size of shared memory
  #if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 200)
  const int SHM_SIZE = 48 * 1024;
  #else
  const int SHM_SIZE = 16 * 1024;
  #endif
  
  
  
  /// Perrformance and return code tester.
  // [class CudaDWTTester (host timing with cudaEvent_t) and the host memCopy() (cudaMemcpy) dropped]
  
  
  
} // end of namespace dwt_cuda



#endif	// DWT_COMMON_CUDA_H


/// line 248 the index
/// @file    transform_buffer.h
/// @brief   Buffer with separated even and odd columns and related algorithms.
/// @author  Martin Jirman (207962@mail.muni.cz)
/// @date    2011-01-20 18:33
///
///
/// Copyright (c) 2011 Martin Jirman
/// All rights reserved.
/// 
/// Redistribution and use in source and binary forms, with or without
/// modification, are permitted provided that the following conditions are met:
/// 
///     * Redistributions of source code must retain the above copyright
///       notice, this list of conditions and the following disclaimer.
///     * Redistributions in binary form must reproduce the above copyright
///       notice, this list of conditions and the following disclaimer in the
///       documentation and/or other materials provided with the distribution.
/// 
/// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
/// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
/// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
/// ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
/// LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
/// CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
/// SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
/// INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
/// CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
/// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
/// POSSIBILITY OF SUCH DAMAGE.
///


#ifndef TRANSFORM_BUFFER_H
#define	TRANSFORM_BUFFER_H


namespace dwt_cuda {
  
  
  /// Buffer (in shared memory of GPU) where block of input image is stored,
  /// but odd and even lines are separated. (Generates less bank conflicts when 
  /// using lifting schema.) All operations expect SIZE_X threads.
  /// Also implements basic building blocks of lifting schema.
  /// @tparam SIZE_X      width of the buffer excluding two boundaries (Also
  ///                     a number of threads participating on all operations.)
  ///                     Must be divisible by 4.
  /// @tparam SIZE_Y      height of buffer (total number of lines)
  /// @tparam BOUNDARY_X  number of extra pixels at the left and right side
  ///                     boundary is expected to be smaller than half SIZE_X
  ///                     Must be divisible by 2.
  template <typename T, int SIZE_X, int SIZE_Y, int BOUNDARY_X>
  class TransformBuffer {
  public:
    enum {
      /// difference between pointers to two vertical neigbors
      VERTICAL_STRIDE = BOUNDARY_X + (SIZE_X / 2)
    };
    
  private:
    enum {
      /// number of shared memory banks - needed for correct padding
      #ifdef __CUDA_ARCH__
      SHM_BANKS = ((__CUDA_ARCH__ >= 200) ? 32 : 16),
      #else
      SHM_BANKS = 16,  // for host code only - can be anything, won't be used
      #endif
      
      /// size of one of two buffers (odd or even)
      BUFFER_SIZE = VERTICAL_STRIDE * SIZE_Y,
      
      /// unused space between two buffers
      PADDING = SHM_BANKS - ((BUFFER_SIZE + SHM_BANKS / 2) % SHM_BANKS),
      
      /// offset of the odd columns buffer from the beginning of data buffer
      ODD_OFFSET = BUFFER_SIZE + PADDING,
    };

    /// buffer for both even and odd columns
    T data[2 * BUFFER_SIZE + PADDING];
    
    
    
    /// Applies specified function to all central elements while also passing
    /// previous and next elements as parameters.
    /// @param count         count of central elements to apply function to
    /// @param prevOffset    offset of first central element
    /// @param midOffset     offset of first central element's predecessor
    /// @param nextOffset    offset of first central element's successor
    /// @param function      the function itself
    template <typename FUNC>
    __device__ void horizontalStep(const int count, const int prevOffset, 
                                   const int midOffset, const int nextOffset,
                                   const FUNC & function) {
      // number of unchecked iterations
      const int STEPS = count / SIZE_X;
      
      // items remaining after last unchecked iteration
      const int finalCount = count % SIZE_X; 
      
      // offset of items processed in last (checked) iteration
      const int finalOffset = count - finalCount;  
      
      // all threads perform fixed number of iterations ...
      for(int i = 0; i < STEPS; i++) {
      // for(int i = 0; i < 3; i++) {
        const T previous = data[prevOffset + i * SIZE_X + threadIdx.x];
        const T next     = data[nextOffset + i * SIZE_X + threadIdx.x];
        T & center       = data[midOffset  + i * SIZE_X + threadIdx.x];
        // function(previous, center, (nextOffset + i*SIZE_X+threadIdx.x));
        function(previous, center, next);// the real one
      }
      
      // ... but not all threads participate on final iteration
      if(threadIdx.x < finalCount) {
        const T previous = data[prevOffset + finalOffset + threadIdx.x];
        const T next     = data[nextOffset + finalOffset + threadIdx.x];
        T & center = data[midOffset + finalOffset + threadIdx.x];
        // function(previous, center, (nextOffset+finalOffset+threadIdx.x));
        // kaixi
        function(previous, center, next);//the real one
      }
    }

  public:
    
    /// Gets offset of the column with given index. Central columns have 
    /// indices from 0 to NUM_LINES - 1, left boundary columns have negative 
    /// indices and right boundary columns indices start with NUM_LINES.
    /// @param columnIndex  index of column to get pointer to
    /// @return  offset of the first item of column with specified index
    __device__ int getColumnOffset(int columnIndex) {
      columnIndex += BOUNDARY_X;             // skip boundary
      return columnIndex / 2                 // select right column
          + (columnIndex & 1) * ODD_OFFSET;  // select odd or even buffer
    }
    
    
    /// Provides access to data of the transform buffer.
    /// @param index  index of the item to work with
    /// @return reference to item at given index
    __device__ T & operator[] (const int index) {
      return data[index];
    }
    
            
    /// Applies specified function to all horizontally even elements in 
    /// specified lines. (Including even elements in boundaries except 
    /// first even element in first left boundary.) SIZE_X threads participate 
    /// and synchronization is needed before result can be used.
    /// @param firstLine  index of first line
    /// @param numLines   count of lines
    /// @param func       function to be applied on all even elements
    ///                   parameters: previous (odd) element, the even
    ///                   element itself and finally next (odd) element
    template <typename FUNC>
    __device__ void forEachHorizontalEven(const int firstLine,
                                          const int numLines,
                                          const FUNC & func) {
      // number of even elemens to apply function to
      const int count = numLines * VERTICAL_STRIDE - 1;
      // offset of first even element
      const int centerOffset = firstLine * VERTICAL_STRIDE + 1;
      // offset of odd predecessor of first even element
      const int prevOffset = firstLine * VERTICAL_STRIDE + ODD_OFFSET;
      // offset of odd successor of first even element
      const int nextOffset = prevOffset + 1;
      
      // call generic horizontal step function
      horizontalStep(count, prevOffset, centerOffset, nextOffset, func);
    }
    
    
    /// Applies given function to all horizontally odd elements in specified
    /// lines. (Including odd elements in boundaries except last odd element
    /// in last right boundary.) SIZE_X threads participate and synchronization
    /// is needed before result can be used.
    /// @param firstLine  index of first line
    /// @param numLines   count of lines
    /// @param func       function to be applied on all odd elements
    ///                   parameters: previous (even) element, the odd
    ///                   element itself and finally next (even) element
    template <typename FUNC>
    __device__ void forEachHorizontalOdd(const int firstLine,
                                         const int numLines,
                                         const FUNC & func) {
      // numbet of odd elements to apply function to
      const int count = numLines * VERTICAL_STRIDE - 1;
      // offset of even predecessor of first odd element
      const int prevOffset = firstLine * VERTICAL_STRIDE;
      // offset of first odd element
      const int centerOffset = prevOffset + ODD_OFFSET;
      // offset of even successor of first odd element
      const int nextOffset = prevOffset + 1;
      
      // call generic horizontal step function
      horizontalStep(count, prevOffset, centerOffset, nextOffset, func);
    }
    
    
    /// Applies specified function to all even elements (except element #0)
    /// of given column. Each thread takes care of one column, so there's 
    /// no need for synchronization.
    /// @param columnOffset  offset of thread's column
    /// @param f             function to be applied on all even elements
    ///                      parameters: previous (odd) element, the even
    ///                      element itself and finally next (odd) element
    template <typename F>
    __device__ void forEachVerticalEven(const int columnOffset, const F & f) {
      if(SIZE_Y > 3) { // makes no sense otherwise
        const int steps = SIZE_Y / 2 - 1;
        for(int i = 0; i < steps; i++) {
          const int row = 2 + i * 2;
          const T prev = data[columnOffset + (row - 1) * VERTICAL_STRIDE];
          const T next = data[columnOffset + (row + 1) * VERTICAL_STRIDE];
          f(prev, data[columnOffset + row * VERTICAL_STRIDE] , next);
		  
		  //--------------- FOR TEST -----------------
/*		__syncthreads();
		if ((blockIdx.x * blockDim.x + threadIdx.x) == 0){
			diffOut[2500]++;
			diffOut[diffOut[2500]] = 2;//data[columnOffset + row * VERTICAL_STRIDE];
		}	
		__syncthreads();
*/		  //--------------- FOR TEST -----------------
		  
		  
        }
      }
    }
    
    
    /// Applies specified function to all odd elements of given column.
    /// Each thread takes care of one column, so there's no need for
    /// synchronization.
    /// @param columnOffset  offset of thread's column
    /// @param f             function to be applied on all odd elements
    ///                      parameters: previous (even) element, the odd
    ///                      element itself and finally next (even) element
    template <typename F>
    __device__ void forEachVerticalOdd(const int columnOffset, const F & f) {
      const int steps = (SIZE_Y - 1) / 2;
      for(int i = 0; i < steps; i++) {
        const int row = i * 2 + 1;
        const T prev = data[columnOffset + (row - 1) * VERTICAL_STRIDE];
        const T next = data[columnOffset + (row + 1) * VERTICAL_STRIDE];

		f(prev, data[columnOffset + row * VERTICAL_STRIDE], next);
		
		
		  //--------------- FOR TEST -----------------
/*		__syncthreads();
		if ((blockIdx.x * blockDim.x + threadIdx.x) == 0){
			diffOut[2500]++;
			diffOut[diffOut[2500]] = 1; //data[columnOffset + row * VERTICAL_STRIDE];
		}

		__syncthreads();
*/		  //--------------- FOR TEST -----------------
      }
    }
    
    
    
    /// Scales elements at specified lines.
    /// @param evenScale  scaling factor for horizontally even elements
    /// @param oddScale   scaling factor for horizontally odd elements
    /// @param numLines   number of lines, whose elements should be scaled
    /// @param firstLine  index of first line to scale elements in
    __device__ void scaleHorizontal(const T evenScale, const T oddScale,
                                    const int firstLine, const int numLines) {
      const int offset = firstLine * VERTICAL_STRIDE;
      const int count = numLines * VERTICAL_STRIDE;
      const int steps = count / SIZE_X;
      const int finalCount = count % SIZE_X;
      const int finalOffset = count - finalCount;
      
      // run iterations, whete all threads participate
      for(int i = 0; i < steps; i++) {
        data[threadIdx.x + i * SIZE_X + offset] *= evenScale;
        data[threadIdx.x + i * SIZE_X + offset + ODD_OFFSET] *= oddScale;
      }
      
      // some threads also finish remaining unscaled items
      if(threadIdx.x < finalCount) {
        data[threadIdx.x + finalOffset + offset] *= evenScale;
        data[threadIdx.x + finalOffset + offset + ODD_OFFSET] *= oddScale;
      }
    }
    
    
    /// Scales elements in specified column.
    /// @param evenScale     scaling factor for vertically even elements
    /// @param oddScale      scaling factor for vertically odd elements
    /// @param columnOffset  offset of the column to work with
    /// @param numLines      number of lines, whose elements should be scaled
    /// @param firstLine     index of first line to scale elements in
    __device__ void scaleVertical(const T evenScale, const T oddScale,
                                  const int columnOffset, const int numLines,
                                  const int firstLine) {
      for(int i = firstLine; i < (numLines + firstLine); i++) {
        if(i & 1) {
          data[columnOffset + i * VERTICAL_STRIDE] *= oddScale;
        } else {
          data[columnOffset + i * VERTICAL_STRIDE] *= evenScale;
        }
      }
    }
	
	
	//****************For Test(Feb23), test inter parameters*************
	__device__ int getVERTICAL_STRIDE(){
		return VERTICAL_STRIDE;
	}
	__device__ int getSHM_BANKS(){
		return SHM_BANKS;
	}
	__device__ int  getBuffersize(){		
		return BUFFER_SIZE;
	}
	__device__ int getPADDING(){
		return PADDING;
	}
	__device__ int getODD_OFFSET(){
		return ODD_OFFSET;
	}


    //****************For Test(Feb23), test inter parameters*************
	
	
  };  // end of class TransformBuffer


} // namespace dwt_cuda


#endif	// TRANSFORM_BUFFER_H


///
/// @file:   io.h
/// @brief   Manages loading and saving lineary stored bands and input images.
/// @author  Martin Jirman (207962@mail.muni.cz)
/// @date    2011-01-20 22:38
/// 
///
/// Copyright (c) 2011 Martin Jirman
/// All rights reserved.
/// 
/// Redistribution and use in source and binary forms, with or without
/// modification, are permitted provided that the following conditions are met:
/// 
///     * Redistributions of source code must retain the above copyright
///       notice, this list of conditions and the following disclaimer.
///     * Redistributions in binary form must reproduce the above copyright
///       notice, this list of conditions and the following disclaimer in the
///       documentation and/or other materials provided with the distribution.
/// 
/// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
/// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
/// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
/// ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
/// LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
/// CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
/// SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
/// INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
/// CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
/// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
/// POSSIBILITY OF SUCH DAMAGE.
///


#ifndef IO_H
#define	IO_H


// #include "common.h" (inlined above)

namespace dwt_cuda {

  
  /// Base for all IO classes - manages mirroring.
  class DWTIO {
  protected:
    /// Handles mirroring of image at edges in a DWT correct way.
    /// @param d      a position in the image (will be replaced by mirrored d)
    /// @param sizeD  size of the image along the dimension of 'd'
    __device__ static void mirror(int & d, const int & sizeD) {
      // TODO: enable multiple mirroring:
//      if(sizeD > 1) {
//        if(d < 0) {
//          const int underflow = -1 - d;
//          const int phase = (underflow / (sizeD - 1)) & 1;
//          const int remainder = underflow % (sizeD - 1);
//          if(phase == 0) {
//            d = remainder + 1;
//          } else {
//            d = sizeD - 2 - remainder;
//          }
//        } else if(d >= sizeD) {
//          const int overflow = d - sizeD;
//          const int phase = (overflow / (sizeD - 1)) & 1;
//          const int remainder = overflow % (sizeD - 1);
//          if(phase == 0) {
//            d = sizeD - 2 - remainder;
//          } else {
//            d = remainder + 1;
//          }
//        }
//      } else {
//        d = 0;
//      }
  //for test the mirror's use Feb 17
      if(d >= sizeD) {
        d = 2 * sizeD - 2 - d;
      } else if(d < 0) {
        d = -d;
      }
    }
  };


  /// Base class for pixel loader and writer - manages computing start index,
  /// stride and end of image for loading column of pixels.
  /// @tparam T        type of image pixels
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTPixelIO : protected DWTIO {
  protected:
    int end;         ///< index of bottom neightbor of last pixel of column
    int stride;      ///< increment of pointer to get to next pixel

    /// Initializes pixel IO - sets end index and a position of first pixel.
    /// @param sizeX   width of the image
    /// @param sizeY   height of the image
    /// @param firstX  x-coordinate of first pixel to use
    /// @param firstY  y-coordinate of first pixel to use
    /// @return index of pixel at position [x, y] in the image
    __device__ int initialize(const int sizeX, const int sizeY,
                              int firstX, int firstY) {
      // initialize all pointers and stride
      end = CHECKED ? (sizeY * sizeX + firstX) : 0;
      stride = sizeX;
      return firstX + sizeX * firstY;
    }
  };



  /// Writes reverse transformed pixels directly into output image.
  /// @tparam T        type of output pixels
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTPixelWriter : VerticalDWTPixelIO<T, CHECKED> {
  private:
    int next;   // index of the next pixel to be loaded

  public:
    /// Initializes writer - sets output buffer and a position of first pixel.
    /// @param sizeX   width of the image
    /// @param sizeY   height of the image
    /// @param firstX  x-coordinate of first pixel to write into
    /// @param firstY  y-coordinate of first pixel to write into
    __device__ void init(const int sizeX, const int sizeY, 
                         int firstX, int firstY) {
      if(firstX < sizeX) {
        next = this->initialize(sizeX, sizeY, firstX, firstY);
      } else {
        this->end = 0;
        this->stride = 0;
        next = 0;
      }
    }

    /// Writes given value at next position and advances internal pointer while
    /// correctly handling mirroring.
    /// @param output  output image to write pixel into
    /// @param value   value of the pixel to be written
    __device__ void writeInto(T * const output, const T & value) {
      if((!CHECKED) || (next != this->end)) {
        output[next] = value;
        next += this->stride;
      }
    }
  };


  
  /// Loads pixels from input image.
  /// @tparam T        type of image input pixels
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTPixelLoader
          : protected VerticalDWTPixelIO<const T, CHECKED> {
  private:
    int last;  ///< index of last loaded pixel
  public:
  

  //******************* FOR TEST **********************
  __device__ int getlast(){
		return last;
	}
  __device__ int getend(){
		return this->end;
	}
  __device__ int getstride(){
		return this->stride;
	}
  __device__ void setend(int a){
      this->end=a;
	}
	//******************* FOR TEST **********************
  
  
  
    /// Initializes loader - sets input size and a position of first pixel.
    /// @param sizeX   width of the image
    /// @param sizeY   height of the image
    /// @param firstX  x-coordinate of first pixel to load
    /// @param firstY  y-coordinate of first pixel to load
    __device__ void init(const int sizeX, const int sizeY,
                         int firstX, int firstY) {
      // correctly mirror x coordinate
      this->mirror(firstX, sizeX);
      
      // 'last' always points to already loaded pixel (subtract sizeX = stride)
      last = this->initialize(sizeX, sizeY, firstX, firstY) - sizeX;
      //last = (FirstX + sizeX * FirstY) - sizeX
    }
    
    /// Sets all fields to zeros, for compiler not to complain about
    /// uninitialized stuff.
    __device__ void clear() {
      this->end = 0;
      this->stride = 0;
      this->last = 0;
    }

    /// Gets another pixel and advancees internal pointer to following one.
    /// @param input  input image to load next pixel from
    /// @return next pixel from given image
    __device__ T loadFrom(const T * const input) {
      last += this->stride;
      if(CHECKED && (last == this->end)) {
        last -= 2 * this->stride;
        this->stride = -this->stride; // reverse loader's direction
      }
      // avoid reading from negative indices if loader is checked
      // return (CHECKED && (last < 0)) ? 0 : input[last];  // TODO: use this checked variant later
      return input[last];
      // return this->end;
      // return last;
      // return this->stride;
    }
  };



  /// Base for band write and loader. Manages computing strides and pointers
  /// to first and last pixels in a linearly-stored-bands correct way.
  /// @tparam T        type of band coefficients
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTBandIO : protected DWTIO {
  protected:
    /// index of bottom neighbor of last pixel of loaded column
    int end;
    
    /// increment of index to get from highpass band to the lowpass one
    int strideHighToLow;
    
    /// increment of index to get from the lowpass band to the highpass one
    int strideLowToHigh;

    /// Initializes IO - sets size of image and a position of first pixel.
    /// @param imageSizeX   width of the image
    /// @param imageSizeY   height of the image
    /// @param firstX       x-coordinate of first pixel to use
    ///                     (Parity determines vertically low or high band.)
    /// @param firstY       y-coordinate of first pixel to use
    ///                     (Parity determines horizontally low or high band.)
    /// @return index of first item specified by firstX and firstY
    __device__ int initialize(const int imageSizeX, const int imageSizeY,
                              int firstX, int firstY) {
      // index of first pixel (topmost one) of the column with index firstX
      int columnOffset = firstX / 2;
      
      // difference between indices of two vertically neighboring pixels
      // in the same band
      int verticalStride;
      
      // resolve index of first pixel according to horizontal parity
      if(firstX & 1) {
        // first pixel in one of right bands
        verticalStride = imageSizeX / 2;
        columnOffset += divRndUp(imageSizeX, 2) * divRndUp(imageSizeY, 2);
        strideLowToHigh = (imageSizeX * imageSizeY) / 2;
      } else {
        // first pixel in one of left bands
        verticalStride = imageSizeX / 2 + (imageSizeX & 1);
        strideLowToHigh = divRndUp(imageSizeY, 2)  * imageSizeX;
      }
      
      // set the other stride
      strideHighToLow = verticalStride - strideLowToHigh;

      // compute index of coefficient which indicates end of image
      if(CHECKED) {
        end = columnOffset                            // right column
                + (imageSizeY / 2) * verticalStride   // right row
                + (imageSizeY & 1) * strideLowToHigh; // possibly in high band
      } else {
        end = 0;
      }


	//***********for test**************
	//	end = CHECKED;
	//***********for test**************
	
	
      // finally, return index of the first item
      return columnOffset                        // right column
              + (firstY / 2) * verticalStride    // right row
              + (firstY & 1) * strideLowToHigh;  // possibly in high band
    }
  };




  /// Directly loads coefficients from four consecutively stored transformed
  /// bands.
  /// @tparam T        type of input band coefficients
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTBandLoader : public VerticalDWTBandIO<const T, CHECKED> {
  private:
    int last;  ///< index of last loaded pixel

    /// Checks internal index and possibly reverses direction of loader.
    /// (Handles mirroring at the bottom of the image.)
    /// @param input   input image to load next coefficient from
    /// @param stride  stride to use now (one of two loader's strides)
    /// @return loaded coefficient
    __device__ T updateAndLoad(const T * const input, const int & stride) {
      last += stride;
      if(CHECKED && (last == this->end)) {
        // undo last two updates of index (to get to previous mirrored item)
        last -= (this->strideLowToHigh + this->strideHighToLow);

        // swap and reverse strides (to move up in the loaded column now)
        const int temp = this->strideLowToHigh;
        this->strideLowToHigh = -this->strideHighToLow;
        this->strideHighToLow = -temp;
      }
      // avoid reading from negative indices if loader is checked
      // return (CHECKED && (last < 0)) ? 0 : input[last];  // TODO: use this checked variant later
      return input[last];
    }
  public:

    /// Initializes loader - sets input size and a position of first pixel.
    /// @param imageSizeX   width of the image
    /// @param imageSizeY   height of the image
    /// @param firstX       x-coordinate of first pixel to load
    ///                     (Parity determines vertically low or high band.)
    /// @param firstY       y-coordinate of first pixel to load
    ///                     (Parity determines horizontally low or high band.)
    __device__ void init(const int imageSizeX, const int imageSizeY,
                         int firstX, const int firstY) {
      this->mirror(firstX, imageSizeX);
      last = this->initialize(imageSizeX, imageSizeY, firstX, firstY);
      
      // adjust to point to previous item
      last -= (firstY & 1) ? this->strideLowToHigh : this->strideHighToLow; 
    }
    
    /// Sets all fields to zeros, for compiler not to complain about
    /// uninitialized stuff.
    __device__ void clear() {
      this->end = 0;
      this->strideHighToLow = 0;
      this->strideLowToHigh = 0;
      this->last = 0;
    }

    /// Gets another coefficient from lowpass band and advances internal index.
    /// Call this method first if position of first pixel passed to init
    /// was in high band.
    /// @param input   input image to load next coefficient from
    /// @return next coefficient from the lowpass band of the given image
    __device__ T loadLowFrom(const T * const input) {
      return updateAndLoad(input, this->strideHighToLow);
    }

    /// Gets another coefficient from the highpass band and advances index.
    /// Call this method first if position of first pixel passed to init
    /// was in high band.
    /// @param input   input image to load next coefficient from
    /// @return next coefficient from the highbass band of the given image
    __device__ T loadHighFrom(const T * const input) {
      return updateAndLoad(input, this->strideLowToHigh);
    }

  };




  /// Directly saves coefficients into four transformed bands.
  /// @tparam T        type of output band coefficients
  /// @tparam CHECKED  true = be prepared to image boundary, false = don't care
  template <typename T, bool CHECKED>
  class VerticalDWTBandWriter : public VerticalDWTBandIO<T, CHECKED> {
  private:
    int next;  ///< index of last loaded pixel

    /// Checks internal index and possibly stops the writer.
    /// (Handles mirroring at edges of the image.)
    /// @param output  output buffer
    /// @param item    item to put into the output
    /// @param stride  increment of the pointer to get to next output index
    __device__ int saveAndUpdate(T * const output, const T & item,
                                  const int & stride) {
//	if(blockIdx.x == 0 && blockIdx.y == 11 && threadIdx.x == 0){		//test, Mar 20					  
      if((!CHECKED) || (next != this->end)) {
        output[next] = item;
        next += stride;
      } 
//	}
      // if((!CHECKED) || (next != this->end)) { //the real one
        // output[next] = item;
        // next += stride;  //stride has been test
      // } 
	return next;
    }
  public:

    /// Initializes writer - sets output size and a position of first pixel.
    /// @param output       output image
    /// @param imageSizeX   width of the image
    /// @param imageSizeY   height of the image
    /// @param firstX       x-coordinate of first pixel to write
    ///                     (Parity determines vertically low or high band.)
    /// @param firstY       y-coordinate of first pixel to write
    ///                     (Parity determines horizontally low or high band.)
    __device__ void init(const int imageSizeX, const int imageSizeY,
                         const int firstX, const int firstY) {
      if (firstX < imageSizeX) {
        next = this->initialize(imageSizeX, imageSizeY, firstX, firstY);
      } else {
        clear();
      }
    }
    
    /// Sets all fields to zeros, for compiler not to complain about
    /// uninitialized stuff.
    __device__ void clear() {
      this->end = 0;
      this->strideHighToLow = 0;
      this->strideLowToHigh = 0;
      this->next = 0;
    }

    /// Writes another coefficient into the band which was specified using
    /// init's firstX and firstY parameters and advances internal pointer.
    /// Call this method first if position of first pixel passed to init
    /// was in lowpass band.
    /// @param output  output image
    /// @param low     lowpass coefficient to save into the lowpass band
    __device__ int writeLowInto(T * const output, const T & primary) {
      return saveAndUpdate(output, primary, this->strideLowToHigh);
    }

    /// Writes another coefficient from the other band and advances pointer.
    /// Call this method first if position of first pixel passed to init
    /// was in highpass band.
    /// @param output  output image
    /// @param high    highpass coefficient to save into the highpass band
    __device__ int writeHighInto(T * const output, const T & other) {
      return saveAndUpdate(output, other, this->strideHighToLow);
    }

	//*******Add three functions to get private values*******
	__device__ int getnext(){
		return next;
	}
	
	__device__ int getend(){
		return this->end;
	}
	
	__device__ int getstrideHighToLow(){
		return this->strideHighToLow;
	}
	
	__device__ int getstrideLowToHigh(){
		return this->strideLowToHigh;
	}
	
	//*******Add three functions to get private values*******
  };
  
  
  
} // namespace dwt_cuda


#endif	// IO_H


/// @file    fdwt53.cu
/// @brief   CUDA implementation of forward 5/3 2D DWT.
/// @author  Martin Jirman (207962@mail.muni.cz)
/// @date    2011-02-04 13:23
///
///
/// Copyright (c) 2011 Martin Jirman
/// All rights reserved.
/// 
/// Redistribution and use in source and binary forms, with or without
/// modification, are permitted provided that the following conditions are met:
/// 
///     * Redistributions of source code must retain the above copyright
///       notice, this list of conditions and the following disclaimer.
///     * Redistributions in binary form must reproduce the above copyright
///       notice, this list of conditions and the following disclaimer in the
///       documentation and/or other materials provided with the distribution.
/// 
/// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
/// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
/// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
/// ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
/// LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
/// CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
/// SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
/// INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
/// CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
/// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
/// POSSIBILITY OF SUCH DAMAGE.
///


// #include "common.h" (inlined above)
// #include "transform_buffer.h" (inlined above)
// #include "io.h" (inlined above)

namespace dwt_cuda {


  /// Wraps buffer and methods needed for computing one level of 5/3 FDWT
  /// using sliding window approach.
  /// @tparam WIN_SIZE_X  width of sliding window
  /// @tparam WIN_SIZE_Y  height of sliding window
  template <int WIN_SIZE_X, int WIN_SIZE_Y>
  class FDWT53 {
  private:
    
    /// Info needed for processing of one input column.
    /// @tparam CHECKED_LOADER  true if column's loader should check boundaries
    ///                         false if there are no near boudnaries to check
    template <bool CHECKED_LOADER>
    struct FDWT53Column {
      /// loader for the column
      VerticalDWTPixelLoader<int, CHECKED_LOADER> loader;
      
      /// offset of the column in shared buffer
      int offset;                   
      
      // backup of first 3 loaded pixels (not transformed)
      int pixel0, pixel1, pixel2;
      
      /// Sets all fields to anything to prevent 'uninitialized' warnings.
      __device__ void clear() {
        offset = pixel0 = pixel1 = pixel2 = 0;
        loader.clear();
      }
    };


    /// Type of shared memory buffer for 5/3 FDWT transforms.
    typedef TransformBuffer<int, WIN_SIZE_X, WIN_SIZE_Y + 3, 2> FDWT53Buffer;

    /// Actual shared buffer used for forward 5/3 DWT.
    FDWT53Buffer buffer;

    /// Difference between indices of two vertical neighbors in buffer.
    enum { STRIDE = FDWT53Buffer::VERTICAL_STRIDE };


    /// Forward 5/3 DWT predict operation.
    struct Forward53Predict {
      __device__ void operator() (const int p, int & c, const int n) const {
        // c = n;
        c -= (p + n) / 2;      // F.8, page 126, ITU-T Rec. T.800 final draft the real one
      }
    };


    /// Forward 5/3 DWT update operation.
    struct Forward53Update {
      __device__ void operator() (const int p, int & c, const int n) const {
        c += (p + n + 2) / 4;  // F.9, page 126, ITU-T Rec. T.800 final draft
      }
    };


    /// Initializes one column: computes offset of the column in shared memory
    /// buffer, initializes loader and finally uses it to load first 3 pixels.
    /// @tparam CHECKED  true if loader of the column checks boundaries
    /// @param column    (uninitialized) column info to be initialized
    /// @param input     input image
    /// @param sizeX     width of the input image
    /// @param sizeY     height of the input image
    /// @param colIndex  x-axis coordinate of the column (relative to the left
    ///                  side of this threadblock's block of input pixels)
    /// @param firstY    y-axis coordinate of first image row to be transformed
	
	template <bool CHECKED>
    __device__ void initColumn(FDWT53Column<CHECKED> & column,
                               const int * const input,
                               const int sizeX, const int sizeY,
                               const int colIndex, const int firstY) {
      // get offset of the column with index 'cId'
      column.offset = buffer.getColumnOffset(colIndex);

      // coordinates of the first pixel to be loaded
      const int firstX = blockIdx.x * WIN_SIZE_X + colIndex;

      if(blockIdx.y == 0) {
        // topmost block - apply mirroring rules when loading first 3 rows
        column.loader.init(sizeX, sizeY, firstX, firstY);

        // load pixels in mirrored way
        column.pixel2 = column.loader.loadFrom(input);  // loaded pixel #0
        column.pixel1 = column.loader.loadFrom(input);  // loaded pixel #1
        column.pixel0 = column.loader.loadFrom(input);  // loaded pixel #2

        // reinitialize loader to start with pixel #1 again
        column.loader.init(sizeX, sizeY, firstX, firstY + 1);
      } else {
        // non-topmost row - regular loading:
        column.loader.init(sizeX, sizeY, firstX, firstY - 2);

        // load 3 rows into the column
        column.pixel0 = column.loader.loadFrom(input);
        column.pixel1 = column.loader.loadFrom(input);
        column.pixel2 = column.loader.loadFrom(input);
        // Now, the next pixel, which will be loaded by loader, is pixel #1.
      }
		
	}


    /// Loads and vertically transforms given column. Assumes that first 3
    /// pixels are already loaded in column fields pixel0 ... pixel2.
    /// @tparam CHECKED  true if loader of the column checks boundaries
    /// @param column    column to be loaded and vertically transformed
    /// @param input     pointer to input image data
    template <bool CHECKED>
    __device__ void loadAndVerticallyTransform(FDWT53Column<CHECKED> & column,
                                               const int * const input) {
	  // take 3 loaded pixels and put them into shared memory transform buffer
      buffer[column.offset + 0 * STRIDE] = column.pixel0;
      buffer[column.offset + 1 * STRIDE] = column.pixel1;
      buffer[column.offset + 2 * STRIDE] = column.pixel2;
	
      // load remaining pixels to be able to vertically transform the window

      for(int i = 3; i < (3 + WIN_SIZE_Y); i++) 
      {
        buffer[column.offset + i * STRIDE] = column.loader.loadFrom(input);
      }
 
      // remember last 3 pixels for use in next iteration
      column.pixel0 = buffer[column.offset + (WIN_SIZE_Y + 0) * STRIDE];
      column.pixel1 = buffer[column.offset + (WIN_SIZE_Y + 1) * STRIDE];
      column.pixel2 = buffer[column.offset + (WIN_SIZE_Y + 2) * STRIDE];

      // vertically transform the column in transform buffer
	  buffer.forEachVerticalOdd(column.offset, Forward53Predict());
      buffer.forEachVerticalEven(column.offset, Forward53Update());
	  
    }


    /// Actual implementation of 5/3 FDWT.
    /// @tparam CHECK_LOADS   true if input loader must check boundaries
    /// @tparam CHECK_WRITES  true if output writer must check boundaries
    /// @param in        input image
    /// @param out       output buffer
    /// @param sizeX     width of the input image 
    /// @param sizeY     height of the input image
    /// @param winSteps  number of sliding window steps
    template <bool CHECK_LOADS, bool CHECK_WRITES>
    __device__ void transform(const int * const in, int * const out,
                              const int sizeX, const int sizeY,
                              const int winSteps) {
      // info about one main and one boundary columns processed by this thread
      FDWT53Column<CHECK_LOADS> column;    
      FDWT53Column<CHECK_LOADS> boundaryColumn;  // only few threads use this

      // Initialize all column info: initialize loaders, compute offset of 
      // column in shared buffer and initialize loader of column.
      const int firstY = blockIdx.y * WIN_SIZE_Y * winSteps;
	  initColumn(column, in, sizeX, sizeY, threadIdx.x, firstY); //has been checked Mar 9th

	  
      // first 3 threads initialize boundary columns, others do not use them
      boundaryColumn.clear();
      if(threadIdx.x < 3) {
        // index of boundary column (relative x-axis coordinate of the column)
        const int colId = threadIdx.x + ((threadIdx.x == 0) ? WIN_SIZE_X : -3);

        // initialize the column
        initColumn(boundaryColumn, in, sizeX, sizeY, colId, firstY);

      }
	  
	  
      // index of column which will be written into output by this thread      
	  const int outColumnIndex = parityIdx<WIN_SIZE_X>();

      // offset of column which will be written by this thread into output
      const int outColumnOffset = buffer.getColumnOffset(outColumnIndex);

      // initialize output writer for this thread
      const int outputFirstX = blockIdx.x * WIN_SIZE_X + outColumnIndex;
      VerticalDWTBandWriter<int, CHECK_WRITES> writer;
	  writer.init(sizeX, sizeY, outputFirstX, firstY);
		
	  
      // Sliding window iterations:
      // Each iteration assumes that first 3 pixels of each column are loaded.
     for(int w = 0; w < winSteps; w++) {

	 // For each column (including boundary columns): load and vertically
        // transform another WIN_SIZE_Y lines.
        loadAndVerticallyTransform(column, in);
        if(threadIdx.x < 3) { 
          loadAndVerticallyTransform(boundaryColumn, in); 
        }
 		
        // wait for all columns to be vertically transformed and transform all
        // output rows horizontally
        __syncthreads();
		

		buffer.forEachHorizontalOdd(2, WIN_SIZE_Y, Forward53Predict());
        __syncthreads();
		
        buffer.forEachHorizontalEven(2, WIN_SIZE_Y, Forward53Update());

        // wait for all output rows to be transformed horizontally and write
        // them into output buffer
        __syncthreads();	


        for(int r = 2; r < (2 + WIN_SIZE_Y); r += 2) {
          // Write low coefficients from output column into low band ...
			writer.writeLowInto(out, buffer[outColumnOffset + r * STRIDE]);
          // ... and high coeficients into the high band.
			writer.writeHighInto(out, buffer[outColumnOffset + (r+1) * STRIDE]);
        }

        // before proceeding to next iteration, wait for all output columns
        // to be written into the output
        __syncthreads();
			
	}
	
    }

    
  public:
    /// Determines, whether this block's pixels touch boundary and selects
    /// right version of algorithm according to it - for many threadblocks, it
    /// selects version which does not deal with boundary mirroring and thus is 
    /// slightly faster.
    /// @param in     input image
    /// @param out    output buffer
    /// @param sx     width of the input image 
    /// @param sy     height of the input image
    /// @param steps  number of sliding window steps
    __device__ static void run(const int * const in, int * const out,
                               const int sx, const int sy, const int steps) {
        // if(blockIdx.x==0 && blockIdx.y ==11 && threadIdx.x >=0&&threadIdx.x <64){
      // object with transform buffer in shared memory
      __shared__ FDWT53<WIN_SIZE_X, WIN_SIZE_Y> fdwt53;

	  // Compute limits of this threadblock's block of pixels and use them to
      // determine, whether this threadblock will have to deal with boundary.
      // (1 in next expressions is for radius of impulse response of 9/7 FDWT.)
      const int maxX = (blockIdx.x + 1) * WIN_SIZE_X + 1;
      const int maxY = (blockIdx.y + 1) * WIN_SIZE_Y * steps + 1;
      const bool atRightBoudary = maxX >= sx;
      const bool atBottomBoudary = maxY >= sy;

      // Select specialized version of code according to distance of this
      // threadblock's pixels from image boundary.
      if(atBottomBoudary) 
      {
        // near bottom boundary => check both writing and reading
        fdwt53.transform<true, true>(in, out, sx, sy, steps);
      } else if(atRightBoudary) 
      {
        // near right boundary only => check writing only
        fdwt53.transform<false, true>(in, out, sx, sy, steps);
      } else 
      {
        // no nearby boundary => check nothing
        fdwt53.transform<false, false>(in, out, sx, sy, steps);
      }
    }
    // }
    
  }; // end of class FDWT53
  
  
  
  /// Main GPU 5/3 FDWT entry point.
  /// @tparam WIN_SX   width of sliding window to be used
  /// @tparam WIN_SY   height of sliding window to be used
  /// @param input     input image
  /// @param output    output buffer
  /// @param sizeX     width of the input image 
  /// @param sizeY     height of the input image
  /// @param winSteps  number of sliding window steps
  template <int WIN_SX, int WIN_SY>
  __launch_bounds__(WIN_SX, CTMIN(SHM_SIZE/sizeof(FDWT53<WIN_SX, WIN_SY>), 8))
  __global__ void fdwt53Kernel(const int * const input, int * const output,
                               const int sizeX, const int sizeY,
                               const int winSteps) {
    FDWT53<WIN_SX, WIN_SY>::run(input, output, sizeX, sizeY, winSteps);
  }

  

  // [host launchers launchFDWT53Kernel / fdwt53 (<<<>>> launches, memCopy) dropped]

} // end of namespace dwt_cuda
